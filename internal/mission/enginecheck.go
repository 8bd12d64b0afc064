package mission

import (
	"context"

	"github.com/aos-run/aos/internal/backend"
)

// ValidEngine reports whether engine names one aos can run: "" or
// "builtin" (the built-in loop), or an external engine as
// backend.ParseEngine accepts it. It checks the name only.
func ValidEngine(engine string) error {
	if engine == "" || engine == "builtin" {
		return nil
	}
	_, err := backend.ParseEngine(engine)
	return err
}

// CheckEngine reports whether engine could start a mission now, with the
// same checks CreateMission makes: for the builtin engine ("" or
// "builtin"), that the default model (or the first available one) is
// served and answers its check; for an external engine, that it passed
// `aos engine check` and has not changed since. It writes nothing.
func (s *Service) CheckEngine(ctx context.Context, engine string) error {
	if engine != "" && engine != "builtin" {
		var rec backend.CheckRecord
		found, err := s.setting(ctx, backend.CheckKey(engine), &rec)
		if err != nil {
			return err
		}
		if err := backend.Offered(engine, rec, found); err != nil {
			return &Error{Code: CodeModelUnavailable, Msg: err.Error(), Err: err}
		}
		return nil
	}
	var model string
	if _, err := s.setting(ctx, SettingDefaultModel, &model); err != nil {
		return err
	}
	if model == "" {
		m, err := s.availableModel(ctx)
		if err != nil {
			return err
		}
		model = m
	}
	return s.checkModel(ctx, model)
}
