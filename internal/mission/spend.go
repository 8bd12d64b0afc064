package mission

import (
	"context"
	"encoding/json"
	"sort"
	"time"
)

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

// Spend summarises spend.
func (s *Service) Spend(ctx context.Context) (Spend, error) {
	now := s.now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var out Spend
	out.Today = today.Format(time.DateOnly)
	for i := 6; i >= 0; i-- {
		d := today.AddDate(0, 0, -i).Format(time.DateOnly)
		usd, err := s.st.GetSpend(ctx, d)
		if err != nil {
			return Spend{}, translate("read spend", err)
		}
		out.Days = append(out.Days, SpendDay{Day: d, USD: usd})
	}
	out.TodayUSD = out.Days[len(out.Days)-1].USD
	capUSD, err := s.k.DailyCap(ctx)
	if err != nil {
		return Spend{}, translate("read daily cap", err)
	}
	out.CapUSD = capUSD
	out.CapReached = capUSD > 0 && out.TodayUSD >= capUSD
	steps, err := s.st.ListCostedSteps(ctx, today.AddDate(0, 0, -6).UnixMilli(), today.AddDate(0, 0, 1).UnixMilli())
	if err != nil {
		return Spend{}, translate("read spend by model", err)
	}
	by := map[string]*ModelSpend{}
	for _, st := range steps {
		var req struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(st.Request, &req)
		if req.Model == "" {
			req.Model = "(unknown)"
		}
		m := by[req.Model]
		if m == nil {
			m = &ModelSpend{Model: req.Model}
			by[req.Model] = m
		}
		m.USD += st.CostUSD
		m.Calls++
	}
	out.ByModel = make([]ModelSpend, 0, len(by))
	for _, m := range by {
		out.ByModel = append(out.ByModel, *m)
	}
	sort.Slice(out.ByModel, func(i, j int) bool {
		if out.ByModel[i].USD != out.ByModel[j].USD {
			return out.ByModel[i].USD > out.ByModel[j].USD
		}
		return out.ByModel[i].Model < out.ByModel[j].Model
	})
	return out, nil
}
