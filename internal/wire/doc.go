// Package wire holds the JSON types of the aos HTTP API: the bodies the
// server (internal/api over internal/mission) sends and accepts, and the
// constants of its WebSocket. The API client (internal/client) speaks with
// these alone, so it links neither the kernel, the engine nor a model SDK.
//
// The mission, api and auth packages alias these types (mission.Mission is
// wire.Mission); the service fills them, the API serves them.
//
// It must import nothing of aos: it is a leaf below every front end.
package wire
