package hostconfig

// SchemaVersion is the one supported value of a file's version field.
const SchemaVersion = 1

// RepoFile is the repo-global .aos/config.yaml: secret-free project
// defaults. It holds no device path and no credential.
type RepoFile struct {
	Version int `yaml:"version"`
	Layer   `yaml:",inline"`
}

// UserFile is the user-local $XDG_CONFIG_HOME/aos/config.yaml: device
// paths, overrides of the repo's values, and project registrations.
type UserFile struct {
	Version   int       `yaml:"version"`
	Paths     Paths     `yaml:"paths"`
	Overrides Layer     `yaml:"overrides"`
	Projects  []Project `yaml:"projects"`
	// Clients declares the client programs aos up owns (seed 002 S15).
	Clients []ClientProgram `yaml:"clients"`
}

// ClientProgram declares one client program of the daemon: its kind, the
// program (an absolute path) and its arguments, its restart policy and the
// kinds it may route details to (internal/clients.Spec).
type ClientProgram struct {
	Kind        string   `yaml:"kind"`
	Argv        []string `yaml:"argv"`
	Restart     string   `yaml:"restart"`
	MaxRestarts int      `yaml:"max_restarts"`
	DetailTo    []string `yaml:"detail_to"`
}

// Paths are device-local roots; each, when set, must be absolute.
type Paths struct {
	State     *string `yaml:"state"`
	Worktrees *string `yaml:"worktrees"`
	Logs      *string `yaml:"logs"`
	Temp      *string `yaml:"temp"`
	Cache     *string `yaml:"cache"`
}

// Project registers one project on this device, by its absolute path (and
// optionally its aos project id), with overrides for it alone.
type Project struct {
	ID        string `yaml:"id"`
	Path      string `yaml:"path"`
	Overrides Layer  `yaml:"overrides"`
}

// Layer is what the repo file sets and what the user file may override,
// globally or per project. A nil pointer, map or slice is absent.
type Layer struct {
	Defaults     Defaults          `yaml:"defaults"`
	Aliases      map[string]string `yaml:"aliases"`
	Verification Verification      `yaml:"verification"`
	Selection    Selection         `yaml:"selection"`
	Isolation    Isolation         `yaml:"isolation"`
	Retention    Retention         `yaml:"retention"`
}

// Defaults are a mission's defaults when its request does not say.
type Defaults struct {
	Model   *string `yaml:"model"`
	Effort  *string `yaml:"effort"`
	Network *string `yaml:"network"`
	// Engine is "builtin" (aos's own loop) or an external engine's name.
	Engine  *string `yaml:"engine"`
	Budgets Budgets `yaml:"budgets"`
}

// Budgets are a mission's default budgets.
type Budgets struct {
	USD        *float64 `yaml:"usd"`
	MaxTurns   *int     `yaml:"max_turns"`
	MaxWallSec *int64   `yaml:"max_wall_sec"`
}

// Verification lists the commands a verification step may run, each an
// exact command line.
type Verification struct {
	Allow []string `yaml:"allow"`
}

// Selection is the ordered selection policy: the first rule that matches a
// mission gives its route, FailoverOn the failure classes that move to the
// next target, FailureBudgets the failures a stage may take.
type Selection struct {
	Rules          []Rule         `yaml:"rules"`
	FailoverOn     []string       `yaml:"failover_on"`
	FailureBudgets map[string]int `yaml:"failure_budgets"`
}

// Rule is one selection rule. A rule without When matches every mission.
type Rule struct {
	ID   string `yaml:"id"`
	When When   `yaml:"when"`
	// Targets are tried in order: a model id or alias, or "engine:NAME".
	Targets []string `yaml:"targets"`
}

// When are a rule's conditions; all that are set must hold.
type When struct {
	// Model matches the requested model (explicit or default), after
	// aliases.
	Model string `yaml:"model"`
	// Project matches the mission's project id.
	Project string `yaml:"project"`
}

// Isolation says how a mission is isolated from the owner's checkout.
type Isolation struct {
	Mode     *string  `yaml:"mode"`
	Fallback []string `yaml:"fallback"`
}

// Retention bounds what aos keeps; 0 means no limit.
type Retention struct {
	MaxMissions *int `yaml:"max_missions"`
	MaxAgeDays  *int `yaml:"max_age_days"`
	MaxLogMB    *int `yaml:"max_log_mb"`
}

// Failure classes a selection may fail over on.
const (
	ClassQuota      = "quota"      // 429, 529, rate limit, overloaded, insufficient quota
	ClassServer     = "server"     // another 5xx
	ClassConnection = "connection" // no response, a dropped stream
)

// Stages that have a failure budget.
const StageModel = "model"

var (
	efforts      = set("low", "medium", "high", "xhigh", "max")
	networks     = set("none", "open")
	isolations   = set("worktree")
	classes      = set(ClassQuota, ClassServer, ClassConnection)
	budgetStages = set(StageModel)
)

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}
