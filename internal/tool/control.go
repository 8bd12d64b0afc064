package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrEngineHandled is returned by Run of the control tools (ask_owner,
// update_criteria, propose_criteria, finish): the engine implements them.
var ErrEngineHandled = errors.New("tool: control tool is handled by the engine")

// Finish statuses the model may choose.
const (
	FinishDone    = "done"
	FinishPartial = "partial"
	FinishBlocked = "blocked"
	FinishFailed  = "failed"
)

func runEngine[I any](context.Context, *Context, I) (Result, error) {
	return Result{}, ErrEngineHandled
}

// control builds a control tool: pure, read risk, parallel-unsafe, engine-run.
func control[I validator](name, desc string, schema map[string]any, approval func(I) Approval) Tool {
	return &def[I]{
		name: name, description: desc, schema: mustJSON(schema),
		effect: always[I](EffectPure), risk: riskAlways[I](RiskRead),
		run: runEngine[I], approval: approval,
	}
}

type askOwnerInput struct {
	Question string    `json:"question"`
	Options  *[]string `json:"options"`
}

func (in askOwnerInput) validate() error {
	if strings.TrimSpace(in.Question) == "" {
		return errors.New("question is required")
	}
	return nil
}

// AskOwner returns the ask_owner tool's definition: a question the engine
// turns into a question wait.
func AskOwner() Tool {
	return control("ask_owner", "Ask the owner a question and wait for the answer. Use only when you cannot proceed safely without it.",
		object(str("question", "The question."), array("options", "Suggested answers, or null.", stringItems, true)),
		func(in askOwnerInput) Approval { return Approval{Title: "Ask the owner", Detail: in.Question} })
}

type criterionUpdate struct {
	ID       string `json:"id"`
	Passes   bool   `json:"passes"`
	Evidence string `json:"evidence"`
}

type updateCriteriaInput struct {
	Updates []criterionUpdate `json:"updates"`
}

func (in updateCriteriaInput) validate() error {
	if len(in.Updates) == 0 {
		return errors.New("updates is required")
	}
	for i, u := range in.Updates {
		if u.ID == "" || strings.TrimSpace(u.Evidence) == "" {
			return fmt.Errorf("updates[%d]: id and evidence are required", i)
		}
	}
	return nil
}

// UpdateCriteria returns the update_criteria tool's definition: it flips
// whether done criteria pass, with evidence; it cannot edit their text.
func UpdateCriteria() Tool {
	item := object(str("id", "The criterion id."), boolean("passes", "Whether it now passes."), str("evidence", "What shows it (command output, file, commit)."))
	return control("update_criteria", "Mark done criteria as passing or not, each with evidence. Criterion text cannot be changed.",
		object(array("updates", "The criteria to update.", item, false)),
		func(in updateCriteriaInput) Approval {
			return Approval{Title: "Update criteria", Detail: fmt.Sprintf("%d update(s)", len(in.Updates))}
		})
}

type proposedCriterion struct {
	Text string `json:"text"`
}

type proposeCriteriaInput struct {
	Criteria []proposedCriterion `json:"criteria"`
	Detail   string              `json:"detail"`
}

func (in proposeCriteriaInput) validate() error {
	if len(in.Criteria) < 1 || len(in.Criteria) > 8 {
		return errors.New("propose between 1 and 8 criteria (3-8 recommended)")
	}
	for i, c := range in.Criteria {
		if strings.TrimSpace(c.Text) == "" {
			return fmt.Errorf("criteria[%d]: text is required", i)
		}
	}
	return nil
}

// ProposeCriteria returns the propose_criteria tool's definition: verifiable
// done criteria the owner confirms before any write.
func ProposeCriteria() Tool {
	item := object(str("text", "A verifiable criterion."))
	return control("propose_criteria", "Propose 3-8 verifiable done criteria for the owner to confirm before you change anything.",
		object(array("criteria", "The proposed criteria.", item, false), str("detail", "Why these criteria; how each will be checked.")),
		func(in proposeCriteriaInput) Approval {
			return Approval{Title: "Proposed criteria", Detail: fmt.Sprintf("%d criteria", len(in.Criteria))}
		})
}

type finishInput struct {
	Status        string   `json:"status"`
	Summary       string   `json:"summary"`
	Evidence      []string `json:"evidence"`
	OpenQuestions []string `json:"openQuestions"`
}

func (in finishInput) validate() error {
	switch in.Status {
	case FinishDone, FinishPartial, FinishBlocked, FinishFailed:
	default:
		return fmt.Errorf("status must be one of done, partial, blocked, failed")
	}
	if strings.TrimSpace(in.Summary) == "" {
		return errors.New("summary is required")
	}
	return nil
}

// Finish returns the finish tool's definition: the only way to end a run.
func Finish() Tool {
	return control("finish", "End the mission with a status, a summary, evidence and open questions. Status done requires every done criterion to pass with evidence.",
		object(
			enum("status", "How the mission ended.", FinishDone, FinishPartial, FinishBlocked, FinishFailed),
			str("summary", "What was done and what was not."),
			array("evidence", "Evidence: commands run, commits, files.", stringItems, false),
			array("openQuestions", "Questions left for the owner.", stringItems, false),
		),
		func(in finishInput) Approval { return Approval{Title: "Finish: " + in.Status, Detail: in.Summary} })
}
