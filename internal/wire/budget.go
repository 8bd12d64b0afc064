package wire

// Budget is a run's budget: USD spend, model turns and wall seconds; 0 is
// no limit (kernel.Budget, the same fields).
type Budget struct {
	USD     float64 `json:"usd"`
	Turns   int     `json:"turns"`
	WallSec int64   `json:"wallSec"`
}

// Price is a model's price in USD per million tokens (provider.Price, the
// same fields).
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}
