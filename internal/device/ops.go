package device

import "github.com/aos-run/aos/internal/agent"

// opFunc decodes one operation's request strictly, checks it and calls the
// agent service; h is the result's header.
type opFunc func(c *conn, data []byte, h Header) (any, error)

// op returns the operation named typ, nil if there is none.
func (s *Service) op(typ string) opFunc {
	switch typ {
	case OpStoreList:
		return opStoreList
	case OpStoreInspect:
		return opStoreInspect
	case OpPrepare:
		return opPrepare
	case OpOperationGet:
		return opOperationGet
	case OpTurnSend:
		return opTurnSend
	case OpReceiptGet:
		return opReceiptGet
	}
	return nil
}

// machine refuses a request addressed to another machine; an empty id is
// this one where the seed makes it optional.
func (c *conn) machine(id string) error {
	if id != "" && id != c.s.opts.Ops.MachineID() {
		return &protoError{agent.CodeMachineMismatch, "machineId names another machine; only the paired machine is addressable"}
	}
	return nil
}

func (c *conn) identity() string { return Identity(c.dev.ID) }

func opStoreList(c *conn, data []byte, h Header) (any, error) {
	var r StoreListRequest
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	if err := c.machine(r.MachineID); err != nil {
		return nil, err
	}
	// The limits (query, offset, limit) are the agent service's one rule.
	q := agent.StoreListRequest{Offset: r.Offset, Limit: r.Limit}
	if r.Query != nil {
		q.Query = *r.Query
	}
	res, err := c.s.opts.Ops.StoreList(c.ctx, c.identity(), q)
	if err != nil {
		return nil, err
	}
	if res.Packages == nil {
		res.Packages = []agent.Package{}
	}
	return StoreListResult{Header: h, StoreListResult: res}, nil
}

func opStoreInspect(c *conn, data []byte, h Header) (any, error) {
	var r StoreInspectRequest
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	if err := required([2]string{"packageId", r.PackageID}); err != nil {
		return nil, err
	}
	if err := c.machine(r.MachineID); err != nil {
		return nil, err
	}
	res, err := c.s.opts.Ops.StoreInspect(c.ctx, c.identity(), r.PackageID)
	if err != nil {
		return nil, err
	}
	if len(res.Candidates) > agent.MaxCandidates {
		res.Candidates, res.CandidatesTruncated = res.Candidates[:agent.MaxCandidates], true
	}
	if res.Candidates == nil {
		res.Candidates = []agent.Agent{}
	}
	return StoreInspectResult{Header: h, StoreInspectResult: res}, nil
}

func opPrepare(c *conn, data []byte, h Header) (any, error) {
	var r PrepareRequest
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	if err := required([2]string{"machineId", r.MachineID}, [2]string{"packageId", r.PackageID}, [2]string{"idempotencyKey", r.IdempotencyKey}); err != nil {
		return nil, err
	}
	if r.Workspace == nil {
		return nil, invalid("workspace is required: {kind:\"new\", name?} or {kind:\"existing\", path}")
	}
	if err := c.machine(r.MachineID); err != nil {
		return nil, err
	}
	res, err := c.s.opts.Ops.Prepare(c.ctx, c.identity(), agent.PrepareRequest{MachineID: r.MachineID, PackageID: r.PackageID, IdempotencyKey: r.IdempotencyKey, Workspace: *r.Workspace})
	if err != nil {
		return nil, err
	}
	return PrepareResult{Header: h, PrepareResult: res}, nil
}

func opOperationGet(c *conn, data []byte, h Header) (any, error) {
	var r OperationGetRequest
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	if err := required([2]string{"operationId", r.OperationID}); err != nil {
		return nil, err
	}
	if err := c.machine(r.MachineID); err != nil {
		return nil, err
	}
	op, err := c.s.opts.Ops.Operation(c.ctx, c.identity(), r.OperationID)
	if err != nil {
		return nil, err
	}
	return OperationGetResult{Header: h, Operation: op}, nil
}

func opTurnSend(c *conn, data []byte, h Header) (any, error) {
	var r TurnSendRequest
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	if err := required([2]string{"machineId", r.MachineID}, [2]string{"agentId", r.AgentID}, [2]string{"idempotencyKey", r.IdempotencyKey}, [2]string{"text", r.Text}); err != nil {
		return nil, err
	}
	if err := c.machine(r.MachineID); err != nil {
		return nil, err
	}
	rc, err := c.s.opts.Ops.SendTurn(c.ctx, c.identity(), agent.TurnSendRequest{MachineID: r.MachineID, AgentID: r.AgentID, IdempotencyKey: r.IdempotencyKey, Text: r.Text})
	if err != nil {
		return nil, err
	}
	return TurnSendResult{Header: h, MachineID: c.s.opts.Ops.MachineID(), ServerInstanceID: c.s.instance, Receipt: rc}, nil
}

func opReceiptGet(c *conn, data []byte, h Header) (any, error) {
	var r ReceiptGetRequest
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	if err := required([2]string{"receiptId", r.ReceiptID}); err != nil {
		return nil, err
	}
	if err := c.machine(r.MachineID); err != nil {
		return nil, err
	}
	rc, err := c.s.opts.Ops.Receipt(c.ctx, c.identity(), r.ReceiptID)
	if err != nil {
		return nil, err
	}
	return ReceiptGetResult{Header: h, Receipt: rc}, nil
}
