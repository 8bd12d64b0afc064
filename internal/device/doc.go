// Package device is the paired-device channel of seed 000, adapted to aos:
// the owner pairs a device (a phone, a robot, another app) with a one-time
// code; the device exchanges it for a device-role token and, with that
// token, opens one WebSocket to aos server that speaks seed 000's
// application protocol (hello, store.list, store.inspect, agent.prepare,
// operation.get, turn.send, receipt.get) over the agent service (Ops).
//
// Transport differs from the seed on purpose: aos uses TLS and a bearer
// device token instead of the seed's PAKE pairing and E2EE envelopes
// (docs/DEVICES.md says so). A device token reaches nothing but this
// channel; the owner API refuses it.
//
// device imports store and agent (for the wire types and Ops' method set);
// it must not import api, mission, kernel or engine.
package device
