// Package gitx runs git on the host, hardened against the repository it
// runs in. Every git process aos starts goes through it.
//
// The workspace is written by sandboxed commands that a model chose, so
// everything git reads from it is hostile: .git/config, hooks,
// .gitattributes, nested repositories and remotes. gitx makes a git run
// execute nothing from the repository, by construction:
//
//   - a minimal environment built from scratch (never os.Environ()): PATH,
//     LC_ALL=C, an empty HOME of its own, no system or global config, no
//     GIT_* variable of the worker's and no provider key;
//   - command-line config that wins over the repository's: no hooks, no
//     fsmonitor, no attributes file, https and ssh transports only, no
//     recursion into submodules or nested repositories, no signing, no pager;
//   - Open refuses a directory that is not the top level of a work tree with
//     a real .git directory, and a repository whose config names a program
//     (filter, diff and merge drivers, *.command, credential helpers,
//     includes): in-tree .gitattributes can name a driver, but a driver
//     runs only if config defines it.
//
// gitx imports nothing of aos's.
package gitx
