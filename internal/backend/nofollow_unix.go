//go:build unix

package backend

import "syscall"

const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
