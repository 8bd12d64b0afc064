package cli

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/provider/script"
)

// NewDevCmd returns the "dev" command group, with "dev model-server": the
// scripted model server, aos's fake model for tests and the demo.
func NewDevCmd() *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Developer tools",
	}
	dev.AddCommand(newModelServerCmd())
	return dev
}

func newModelServerCmd() *cobra.Command {
	var addr, scriptPath string
	cmd := &cobra.Command{
		Use:   "model-server",
		Short: "Serve the scripted model (a fake model) on loopback",
		Long: `Serve the scripted model server on a loopback address. It speaks the Anthropic
Messages, OpenAI Responses and OpenAI Chat Completions wire formats, streamed, so
that the official SDKs parse it unchanged. It is a fake model: its answers come
from a script (docs/PROVIDERS.md). Without --script, the built-in "echo" script
answers every request with one short text turn.

Point the SDKs at it with ANTHROPIC_BASE_URL=<url> or OPENAI_BASE_URL=<url>/v1,
and choose a script with the model name "script:<name>". Every request is
recorded and readable at GET <url>/_requests.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set := &script.Set{}
			if scriptPath != "" {
				var err error
				if set, err = script.Load(scriptPath); err != nil {
					return err
				}
			}
			srv, err := script.Start(set, addr, script.Options{})
			if err != nil {
				return err
			}
			defer srv.Close()
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, srv.URL())
			fmt.Fprintf(cmd.ErrOrStderr(), "aos scripted model server (fake model) at %s\n  ANTHROPIC_BASE_URL=%s\n  OPENAI_BASE_URL=%s\n  requests: %s/_requests\n",
				srv.URL(), srv.URL(), srv.OpenAIBaseURL(), srv.URL())
			parent := cmd.Context()
			if parent == nil {
				parent = context.Background()
			}
			ctx, stop := signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "loopback address to listen on (host:port)")
	cmd.Flags().StringVar(&scriptPath, "script", "", "script file or directory (default: the built-in echo script)")
	return cmd
}
