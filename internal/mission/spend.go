package mission

import (
	"context"
	"encoding/json"
	"github.com/aos-run/aos/internal/wire"
	"sort"
	"time"
)

// SpendDay is wire.SpendDay, its JSON form on the API.
type SpendDay = wire.SpendDay

// ModelSpend is wire.ModelSpend, its JSON form on the API.
type ModelSpend = wire.ModelSpend

// Spend is wire.Spend, its JSON form on the API.
type Spend = wire.Spend

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
