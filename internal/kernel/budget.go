package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// SettingDailyBudgetUSD is the settings key of the daily cap, in USD (a JSON
// number; 0 or absent means no cap).
const SettingDailyBudgetUSD = "daily_budget_usd"

// DailyCap returns the daily cap from settings, 0 when none.
func (k *Kernel) DailyCap(ctx context.Context) (float64, error) {
	raw, err := k.st.GetSetting(ctx, SettingDailyBudgetUSD)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read daily cap: %w", err)
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("read daily cap: setting is not a number: %w", err)
	}
	return v, nil
}

// SetDailyCap stores the daily cap (0 removes it).
func (k *Kernel) SetDailyCap(ctx context.Context, usd float64) error {
	if usd < 0 {
		return &Error{Code: CodeInvalidInput, Seq: -1, Msg: "daily cap must not be negative"}
	}
	b, _ := json.Marshal(usd)
	return k.st.PutSetting(ctx, SettingDailyBudgetUSD, b, k.now())
}

// SpentToday returns today's spend (UTC day) in USD.
func (k *Kernel) SpentToday(ctx context.Context) (float64, error) {
	day := time.UnixMilli(k.now()).UTC().Format(time.DateOnly)
	v, err := k.st.GetSpend(ctx, day)
	if err != nil {
		return 0, fmt.Errorf("read today's spend: %w", err)
	}
	return v, nil
}
