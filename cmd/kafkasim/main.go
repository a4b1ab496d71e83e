// Command kafkasim runs deterministic simulations of Kafka clusters. Each
// subcommand lives in its own file; see usage below or `kafkasim help`.
//
// Exit codes: 0 success; 1 a checker found a violation (or a command
// failed); 2 bad input; 3 a checker could only say unknown; 4 a run could
// not be carried out (run, replay). 'kafkasim CMD -help' gives each
// command's own.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/harness"
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
	if why := takeMemoryStop(); why != "" && !errors.As(err, new(usageError)) {
		// resources.go: the runs passed -max-memory and were stopped.
		err = exitError{harness.ExitRunFailed, why + "; the runs were stopped there"}
	}
	var ue usageError
	var ee exitError
	var hr helpRequest
	switch {
	case errors.As(err, &hr):
		writeHelp(stdout, args[0], hr.fs)
		return 0
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
func newFlags(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kafkasim "+name, flag.ContinueOnError)
	// NB: the flag package's own messages are silenced: main prints the
	// error once, and -help prints the command's help (help.go).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses flags, turning their errors into usage errors and refusing
// stray arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseArgs parses flags and leaves positional arguments (merge's shard
// directories) to the caller; -h and -help become a helpRequest.
func parseArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequest{fs}
		}
		return usagef("%v (kafkasim %s -help lists the flags)", err, strings.TrimPrefix(fs.Name(), "kafkasim "))
	}
	return nil
}
