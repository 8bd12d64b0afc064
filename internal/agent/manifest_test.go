package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store/storetest"
)

const goodManifest = `{"packageId":"x/y","name":"N","description":"D","category":"c","engine":"builtin","viewerPackageId":null,"version":"1"}`

func TestParseManifestStrict(t *testing.T) {
	t.Parallel()
	if _, err := agent.ParseManifest([]byte(goodManifest)); err != nil {
		t.Fatalf("good manifest: %v", err)
	}
	for name, m := range map[string]string{
		"unknown field":   strings.Replace(goodManifest, `"version":"1"`, `"version":"1","command":"rm -rf /"`, 1),
		"trailing":        goodManifest + `{}`,
		"bad id":          strings.Replace(goodManifest, `"x/y"`, `"../y"`, 1),
		"no name":         strings.Replace(goodManifest, `"name":"N"`, `"name":""`, 1),
		"control":         strings.Replace(goodManifest, `"D"`, `"a\u001b[2Jb"`, 1),
		"engine":          strings.Replace(goodManifest, `"builtin"`, `"bash -c x"`, 1),
		"engine prefix":   strings.Replace(goodManifest, `"builtin"`, `"codexfoo"`, 1),
		"engine escape":   strings.Replace(goodManifest, `"builtin"`, `"command:/bin/x\u001b]0;owned\u0007"`, 1),
		"setup escapes":   strings.Replace(goodManifest, `"version":"1"`, `"version":"1","setup":"../../bin/sh"`, 1),
		"setup absolute":  strings.Replace(goodManifest, `"version":"1"`, `"version":"1","setup":"/bin/sh"`, 1),
		"network":         strings.Replace(goodManifest, `"version":"1"`, `"version":"1","policy":{"network":"all"}`, 1),
		"policy unknown":  strings.Replace(goodManifest, `"version":"1"`, `"version":"1","policy":{"sudo":true}`, 1),
		"own viewer":      strings.Replace(goodManifest, `"viewerPackageId":null`, `"viewerPackageId":"x/y"`, 1),
		"not an object":   `[]`,
		"wrong type":      strings.Replace(goodManifest, `"version":"1"`, `"version":1`, 1),
		"missing version": strings.Replace(goodManifest, `,"version":"1"`, ``, 1),
	} {
		if _, err := agent.ParseManifest([]byte(m)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestAddPackageRefusals: a package tree with a symbolic link (also as its
// manifest, which is not read), or an official package's id, is refused;
// adding runs no script.
func TestAddPackageRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{noModel: true})
		ctx := context.Background()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "aos-package.json"), strings.Replace(goodManifest, `"version":"1"`, `"version":"1","setup":"setup.sh"`, 1))
		mark := filepath.Join(t.TempDir(), "ran")
		write(t, filepath.Join(dir, "setup.sh"), "touch "+mark+"\n")
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		if _, err := b.svc.AddPackage(ctx, dir); code(err) != agent.CodeInvalidRequest {
			t.Fatalf("tree with a link: %v", err)
		}
		if err := os.Remove(filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		p, err := b.svc.AddPackage(ctx, dir)
		if err != nil || p.InstallAllowed || p.Installed || p.Verified {
			t.Fatalf("add = %s, %v", js(p), err)
		}
		// A .git in the source is not part of the package: same version.
		if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
		before, err := b.db.Store.GetAgentPackage(ctx, "x/y")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.svc.AddPackage(ctx, dir); err != nil {
			t.Fatalf("add with .git: %v", err)
		}
		if after, err := b.db.Store.GetAgentPackage(ctx, "x/y"); err != nil || after.Version != before.Version {
			t.Fatalf("version with .git %q (%v), without %q", after.Version, err, before.Version)
		}
		if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(mark); err == nil {
			t.Fatal("adding a package ran its setup")
		}
		write(t, filepath.Join(dir, "aos-package.json"), strings.Replace(goodManifest, `"x/y"`, `"aos/go-service"`, 1))
		if _, err := b.svc.AddPackage(ctx, dir); code(err) != agent.CodeInvalidRequest {
			t.Fatalf("official id: %v", err)
		}
		// The manifest itself a link to a host file: refused as a link,
		// before the host file is read (its field names would show in the
		// parse error).
		host := filepath.Join(t.TempDir(), "host.json")
		write(t, host, `{"HOST-FILE-CANARY": 1}`)
		linked := t.TempDir()
		if err := os.Symlink(host, filepath.Join(linked, "aos-package.json")); err != nil {
			t.Fatal(err)
		}
		if _, err := b.svc.AddPackage(ctx, linked); code(err) != agent.CodeInvalidRequest || strings.Contains(err.Error(), "HOST-FILE-CANARY") {
			t.Fatalf("manifest linked to a host file: %v", err)
		}
	})
}

// TestScriptsGetNoSecrets: setup and doctor see none of aos's environment
// beyond PATH/HOME/USER/LOGNAME/TMPDIR, and doctor output is bounded to ten
// lines of 400 characters.
func TestScriptsGetNoSecrets(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.env["AOS_TOKEN"] = "tok-canary"
		b.env["OPENAI_API_KEY"] = "sk-canary"
		envFile := filepath.Join(t.TempDir(), "env")
		long := strings.Repeat("x", 1000)
		b.pkg(fixture{id: "fix/env", setup: "env > " + envFile + "\n",
			doctor: "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo line $i; done; echo " + long + "\n"}, true)
		o := b.settled(b.mustPrepare("env-1", "fix/env", agent.Workspace{Kind: "new"}).OperationID)
		if o.State != agent.StateReady {
			t.Fatalf("%s", js(o))
		}
		data, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"canary", "ANTHROPIC", "OPENAI", "AOS_TOKEN"} {
			if strings.Contains(string(data), secret) {
				t.Errorf("setup's environment holds %s:\n%s", secret, data)
			}
		}
		if !strings.Contains(string(data), "AOS_PACKAGE_ID=fix/env") {
			t.Errorf("setup's environment lacks the package id:\n%s", data)
		}
		insp, _ := b.svc.StoreInspect(context.Background(), agent.OwnerIdentity, "fix/env")
		lines := insp.Package.Readiness.Lines
		if len(lines) != agent.MaxDoctorLines || len([]rune(lines[9])) != agent.MaxDoctorLineLen || lines[0] != "line 7" {
			t.Fatalf("doctor lines (%d) = %q", len(lines), lines)
		}
	})
}

// TestStoreListPaging: limits, defaults, term matching and nextOffset.
func TestStoreListPaging(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{noModel: true})
		ctx := context.Background()
		for i := range 12 {
			b.pkg(fixture{id: "fix/p" + string(rune('a'+i))}, false)
		}
		var ids []string
		next := new(int)
		for next != nil {
			lim := 5
			res, err := b.svc.StoreList(ctx, agent.OwnerIdentity, agent.StoreListRequest{Query: "fixture  test", Offset: next, Limit: &lim})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Packages {
				ids = append(ids, p.PackageID)
			}
			next = res.NextOffset
		}
		if len(ids) != 12 || ids[0] != "fix/pa" || ids[11] != "fix/pl" {
			t.Fatalf("pages = %v", ids)
		}
		res, _ := b.svc.StoreList(ctx, agent.OwnerIdentity, agent.StoreListRequest{})
		if len(res.Packages) != agent.DefaultLimit || res.NextOffset == nil || *res.NextOffset != 10 {
			t.Fatalf("default page: %d packages, next %v", len(res.Packages), res.NextOffset)
		}
		if res, _ := b.svc.StoreList(ctx, agent.OwnerIdentity, agent.StoreListRequest{Query: "pytest PYTHON"}); len(res.Packages) != 1 || res.Packages[0].PackageID != "aos/python-pytest" {
			t.Fatalf("terms: %s", js(res))
		}
		if res, _ := b.svc.StoreList(ctx, agent.OwnerIdentity, agent.StoreListRequest{Query: "python blender"}); len(res.Packages) != 0 {
			t.Fatalf("all terms must match: %s", js(res))
		}
		bad := func(n int) *int { return &n }
		for name, r := range map[string]agent.StoreListRequest{
			"query":  {Query: strings.Repeat("q", 201)},
			"offset": {Offset: bad(25001)},
			"neg":    {Offset: bad(-1)},
			"limit0": {Limit: bad(0)},
			"limit":  {Limit: bad(11)},
		} {
			if _, err := b.svc.StoreList(ctx, agent.OwnerIdentity, r); code(err) != agent.CodeInvalidRequest {
				t.Errorf("%s: %v", name, err)
			}
		}
		if res, err := b.svc.StoreList(ctx, agent.OwnerIdentity, agent.StoreListRequest{Offset: bad(25000)}); err != nil || len(res.Packages) != 0 || res.NextOffset != nil {
			t.Fatalf("offset 25000: %s, %v", js(res), err)
		}
	})
}
