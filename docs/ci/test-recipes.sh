#!/usr/bin/env bash
# Runs the CI recipes of docs/ci/ here: the Go test in internal/cirecipes
# parses github-actions.yml and gitlab-ci.yml with a YAML parser, takes
# each job's run:/script: commands as CI would run them (every matrix
# shard, every parallel job), installs kafkasim from this checkout in
# place of the pinned `go install ...@VERSION` (no network), runs them
# against examples/scenarios, and checks the exit codes and the JUnit
# files; then once more with a failing script, where every job must fail
# and still leave its JUnit file and reports. `go test ./...` runs it too.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go test ./internal/cirecipes -count=1 -v "$@"
