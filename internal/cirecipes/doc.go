// Package cirecipes holds the test of the CI recipes in docs/ci/
// (github-actions.yml, gitlab-ci.yml; docs/ci.md describes them). The test
// reads the files as the CI systems do, with a YAML parser, takes the
// shell commands of each job (GitHub's run: steps, every matrix
// combination; GitLab's script:, every parallel job) and runs them here
// against examples/scenarios, with this checkout's `go install
// ./cmd/kafkasim` in place of the pinned `go install ...@VERSION`, so that
// a recipe a user copies is one that ran: its exit code fails the job on a
// contract break, and its JUnit file and reports are where its upload
// step looks. The package has no code of its own; docs/ci/test-recipes.sh
// runs the test alone.
package cirecipes
