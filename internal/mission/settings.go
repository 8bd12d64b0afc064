package mission

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
)

// Settings are the owner's settings. A nil field is unset (GET) or left
// unchanged (PUT).
type Settings struct {
	// DailyBudgetUSD is the daily cap across all missions; 0 means none.
	DailyBudgetUSD   *float64 `json:"dailyBudgetUsd"`
	DefaultModel     *string  `json:"defaultModel"`
	DefaultEffort    *string  `json:"defaultEffort"`
	DefaultBudgetUSD *float64 `json:"defaultBudgetUsd"`
	DefaultMaxTurns  *int     `json:"defaultMaxTurns"`
	// LocalBaseURL is the OpenAI-compatible endpoint of "local:" models
	// (http or https, ending in /v1); it wins over AOS_LOCAL_BASE_URL. ""
	// clears it.
	LocalBaseURL *string `json:"localBaseUrl"`
	// RetentionEventsDays prunes the events of missions ended more than
	// this many days ago (aos server, hourly); 0 keeps them all.
	RetentionEventsDays *int `json:"retentionEventsDays"`
	// RetentionAuditDays prunes the audit records of missions ended more
	// than this many days ago; 0 keeps them all.
	RetentionAuditDays *int `json:"retentionAuditDays"`
}

// settingKeys maps each field to its settings key.
func (st *Settings) fields() []struct {
	key string
	v   any
} {
	return []struct {
		key string
		v   any
	}{
		{kernel.SettingDailyBudgetUSD, &st.DailyBudgetUSD},
		{SettingDefaultModel, &st.DefaultModel},
		{SettingDefaultEffort, &st.DefaultEffort},
		{SettingDefaultBudgetUSD, &st.DefaultBudgetUSD},
		{SettingDefaultMaxTurns, &st.DefaultMaxTurns},
		{provider.SettingLocalBaseURL, &st.LocalBaseURL},
		{SettingRetentionEventsDays, &st.RetentionEventsDays},
		{SettingRetentionAuditDays, &st.RetentionAuditDays},
	}
}

// GetSettings returns the settings.
func (s *Service) GetSettings(ctx context.Context) (Settings, error) {
	var out Settings
	for _, f := range out.fields() {
		if _, err := s.setting(ctx, f.key, f.v); err != nil {
			return Settings{}, err
		}
	}
	return out, nil
}

// PutSettings validates every given field first, then writes them; bad
// input changes nothing.
func (s *Service) PutSettings(ctx context.Context, actor Actor, in Settings) (Settings, error) {
	money := func(name string, v *float64) error {
		if v != nil && (*v < 0 || *v > 1e6 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return invalid("%s must be between 0 and 1,000,000 USD", name)
		}
		return nil
	}
	if err := money("dailyBudgetUsd", in.DailyBudgetUSD); err != nil {
		return Settings{}, err
	}
	if err := money("defaultBudgetUsd", in.DefaultBudgetUSD); err != nil {
		return Settings{}, err
	}
	if in.DefaultMaxTurns != nil && (*in.DefaultMaxTurns < 0 || *in.DefaultMaxTurns > 100000) {
		return Settings{}, invalid("defaultMaxTurns must be between 0 and 100000")
	}
	for name, v := range map[string]*int{"retentionEventsDays": in.RetentionEventsDays, "retentionAuditDays": in.RetentionAuditDays} {
		if v != nil && (*v < 0 || *v > maxRetentionDays) {
			return Settings{}, invalid("%s must be between 0 (keep everything) and %d days", name, maxRetentionDays)
		}
	}
	if in.DefaultModel != nil && (strings.TrimSpace(*in.DefaultModel) == "" || len(*in.DefaultModel) > 200) {
		return Settings{}, invalid("defaultModel must be a model id")
	}
	if in.DefaultEffort != nil && *in.DefaultEffort != "" && !provider.Effort(*in.DefaultEffort).Valid() {
		return Settings{}, invalid("defaultEffort must be low, medium, high, xhigh or max")
	}
	if in.LocalBaseURL != nil && *in.LocalBaseURL != "" {
		if err := provider.CheckLocalBaseURL(*in.LocalBaseURL); err != nil {
			return Settings{}, invalid("localBaseUrl: %s", err.Error())
		}
	}
	changed := map[string]any{}
	for _, f := range in.fields() {
		raw, err := json.Marshal(f.v)
		if err != nil {
			return Settings{}, fmt.Errorf("mission: encode setting %s: %w", f.key, err)
		}
		if string(raw) == "null" {
			continue
		}
		var inner json.RawMessage
		_ = json.Unmarshal(raw, &inner)
		if err := s.st.PutSetting(ctx, f.key, inner, s.now().UnixMilli()); err != nil {
			return Settings{}, translate("put setting", err)
		}
		changed[f.key] = inner
	}
	if in.LocalBaseURL != nil {
		s.forgetModels() // the local endpoint's list is another one now
	}
	s.audit(ctx, actor, "settings.put", "settings", changed)
	return s.GetSettings(ctx)
}
