// Package store is the storage seam of aos: the types that are persisted and
// the Queries every dialect implements. Drivers live in store/sqlite and
// store/postgres; the SQL they share lives in store/sqlstore; store/storetest
// is the conformance suite both must pass.
//
// Package store must not import any other aos package: everything above it
// (kernel, engine, api, …) depends on it, never the reverse. A test in
// internal/layering enforces this.
package store
