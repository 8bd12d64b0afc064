// Package mission is the one service every aos front end calls: the HTTP
// API, the WebSocket, the CLI and, later, the console and the control
// socket. It owns the business rules (the daily cap, defaults from
// settings, workspace confinement, what a browser may see of a step, who
// may do what with a token, the audit log); front ends parse, authenticate
// and present, and decide nothing.
//
// Its errors are *Error values with a Code, matched with errors.Is against
// the sentinels in errors.go; front ends map codes to their own statuses.
//
// Package mission may import kernel, store, engine and policy; it must not
// import any front end (api, cli, console, control).
package mission
