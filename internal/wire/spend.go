package wire

// Spend is today's spend against the daily cap, the last 7 UTC days and the
// same 7 days by model.
//
// Days come from the spend_days table the kernel adds to when a step with a
// cost commits. ByModel sums those same steps' costs, grouped by the model
// named in each model_call request, over the same window: both are sums of
// the same per-step costs, recorded in the same transaction, so they agree.
// A costed step without a model in its request counts as "(unknown)".
type Spend struct {
	Today      string       `json:"today"`
	TodayUSD   float64      `json:"todayUsd"`
	CapUSD     float64      `json:"capUsd"` // 0: no cap
	CapReached bool         `json:"capReached"`
	Days       []SpendDay   `json:"days"` // oldest first, today last
	ByModel    []ModelSpend `json:"byModel"`
}

// SpendDay is one UTC day's spend.
type SpendDay struct {
	Day string  `json:"day"`
	USD float64 `json:"usd"`
}

// ModelSpend is one model's spend over the summary's days.
type ModelSpend struct {
	Model string  `json:"model"`
	USD   float64 `json:"usd"`
	Calls int     `json:"calls"`
}
