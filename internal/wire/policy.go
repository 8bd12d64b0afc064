package wire

// Rule is an owner policy rule as presented.
type Rule struct {
	ID            string `json:"id"`
	ProjectID     string `json:"projectId,omitempty"`
	Tool          string `json:"tool"`
	CommandPrefix string `json:"commandPrefix,omitempty"`
	Decision      string `json:"decision" enum:"allow,ask,deny"`
	Note          string `json:"note,omitempty"`
	CreatedAt     int64  `json:"createdAt"`
}

// AddRuleRequest adds a rule; an empty ProjectID makes it global.
type AddRuleRequest struct {
	ProjectID     string `json:"projectId,omitempty"`
	Tool          string `json:"tool"`
	CommandPrefix string `json:"commandPrefix,omitempty"`
	Decision      string `json:"decision" enum:"allow,ask,deny"`
	Note          string `json:"note,omitempty"`
}
