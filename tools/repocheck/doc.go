// Package repocheck holds tests of the repository as a whole: rules of the
// house that no single package's tests can see, such as the size of every
// hand-written Go file. It has no code of its own; `make test` runs it with
// every other package.
package repocheck
