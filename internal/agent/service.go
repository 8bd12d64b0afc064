package agent

import "context"

// Service is the Store and agent service. It is safe for concurrent use.
type Service struct {
	machineID string
}

// MachineID returns this machine's stable id.
func (s *Service) MachineID() string { return s.machineID }

// StoreList returns one page of the catalog and installed packages.
func (s *Service) StoreList(ctx context.Context, identity string, r StoreListRequest) (StoreListResult, error) {
	return StoreListResult{}, errf(CodeUnsupportedCapability, "not implemented yet")
}

// StoreInspect returns a package and up to five candidate agents.
func (s *Service) StoreInspect(ctx context.Context, identity, packageID string) (StoreInspectResult, error) {
	return StoreInspectResult{}, errf(CodeUnsupportedCapability, "not implemented yet")
}

// Prepare reserves a preparation operation durably and starts it.
func (s *Service) Prepare(ctx context.Context, identity string, r PrepareRequest) (PrepareResult, error) {
	return PrepareResult{}, errf(CodeUnsupportedCapability, "not implemented yet")
}

// Operation returns identity's operation.
func (s *Service) Operation(ctx context.Context, identity, operationID string) (Operation, error) {
	return Operation{}, errf(CodeOperationNotFound, "not implemented yet")
}

// SendTurn sends a task to an agent once per idempotency key.
func (s *Service) SendTurn(ctx context.Context, identity string, r TurnSendRequest) (Receipt, error) {
	return Receipt{}, errf(CodeUnsupportedCapability, "not implemented yet")
}

// Receipt returns identity's turn receipt.
func (s *Service) Receipt(ctx context.Context, identity, receiptID string) (Receipt, error) {
	return Receipt{}, errf(CodeReceiptNotFound, "not implemented yet")
}

// Revoke stops identity's future preparation steps at their next boundary.
func (s *Service) Revoke(ctx context.Context, identity string) error { return nil }
