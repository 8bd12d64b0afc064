package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestDeviceRevokedMidPreparation revokes a device over the owner API
// while its preparation's setup script runs in the real agent service: the
// device's socket closes at once (4403); the setup, which cannot be undone,
// finishes; the operation stops at the next boundary with REVOKED, makes no
// workspace and no agent; the install stays; the token is refused.
func TestDeviceRevokedMidPreparation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b, as := agentBundleSvc(t, db)
		dir, fifo, count := t.TempDir(), filepath.Join(t.TempDir(), "setup.fifo"), filepath.Join(t.TempDir(), "setup.count")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{
			"aos-package.json": `{"packageId":"fix/slow","name":"Slow","description":"blocks in setup","category":"test","engine":"builtin","viewerPackageId":null,"version":"1","setup":"setup.sh"}`,
			"setup.sh":         "echo setup >> " + count + "\ncat " + fifo + " >/dev/null\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctx := context.Background()
		if _, err := as.AddPackage(ctx, dir); err != nil {
			t.Fatal(err)
		}
		if _, err := as.ReviewPackage(ctx, "fix/slow"); err != nil {
			t.Fatal(err)
		}
		pd := b.pair("robot")
		d := b.mustDial(pd.Token)
		h := d.hello()
		res := d.call(map[string]any{"type": "agent.prepare", "machineId": h["machineId"], "packageId": "fix/slow", "idempotencyKey": "slow-1",
			"workspace": map[string]any{"kind": "new", "name": "slow"}})
		opID := res["operation"].(map[string]any)["operationId"].(string)
		waitFor(t, 30*time.Second, "the setup to start", func() bool { data, _ := os.ReadFile(count); return len(data) > 0 })

		if status, out := b.do("DELETE", "/devices/"+pd.DeviceID, nil, b.write); status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", status, out)
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, _, err := d.ws.Read(rctx)
		cancel()
		if websocket.CloseStatus(err) != device.StatusRevoked {
			t.Fatalf("socket after revoke: %v", err)
		}
		// Let the setup end: it ran, and cannot be undone.
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.WriteString("go\n")
		_ = f.Close()
		var op agent.Operation
		waitFor(t, 30*time.Second, "the operation to stop", func() bool {
			op, _ = as.Operation(ctx, device.Identity(pd.DeviceID), opID)
			return op.State == agent.StateNeedsUserAction || op.State == agent.StateFailed || op.State == agent.StateReady
		})
		if op.Error == nil || op.Error.Code != agent.CodeRevoked || op.AgentID != nil {
			t.Fatalf("operation after revoke: %+v", op)
		}
		if _, err := os.Stat(filepath.Join(b.root, "slow")); err == nil {
			t.Error("the workspace was made after revocation")
		}
		if data, _ := os.ReadFile(count); string(data) != "setup\n" {
			t.Errorf("setup ran %q, want once", data)
		}
		insp, err := as.StoreInspect(ctx, agent.OwnerIdentity, "fix/slow")
		if err != nil || !insp.Package.Installed {
			t.Errorf("the install done before revocation is kept: %+v %v", insp.Package, err)
		}
		if _, resp, err := b.dialDevice(pd.Token); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("revoked token dials: %v", err)
		}
	})
}
