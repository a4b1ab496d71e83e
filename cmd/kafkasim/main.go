// Command kafkasim runs deterministic simulations of Kafka clusters. Each
// subcommand lives in its own file; see usage below or `kafkasim help`.
//
// Exit codes: 0 success; 1 a run failed or found a violation; 2 bad input.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

// usageError is bad input: it exits with code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// failedError means the command ran and found a failure: exit code 1.
type failedError struct{ msg string }

func (e failedError) Error() string { return e.msg }

// gcPercent is the garbage collector's target when GOGC is not set: a
// simulation allocates fast and keeps little (tens of MB a world), so
// collecting less often buys 20–40% of run time for a few hundred MB.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "kafkasim: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(args[1:], stdout, stderr)
	var ue usageError
	var ee exitError
	switch {
	case errors.As(err, &ee):
		fmt.Fprintf(stderr, "kafkasim %s: %v\n", args[0], err)
		return ee.code
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "kafkasim %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(stderr, "kafkasim %s: %v\n", args[0], err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: kafkasim <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'kafkasim <command> -h' for a command's flags.")
}

// newFlags returns a flag set whose parse errors are usage errors.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kafkasim "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses flags, turning their errors into usage errors and refusing
// stray arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
