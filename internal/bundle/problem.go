package bundle

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a bundle file: which file, which field
// (empty when the whole file is at fault) and what is wrong with it.
type Problem struct {
	File    string `json:"file"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Field == "" {
		return fmt.Sprintf("%s: %s", p.File, p.Message)
	}
	return fmt.Sprintf("%s: %s: %s", p.File, p.Field, p.Message)
}

// Problems is a list of problems that is also an error, so that a reader can
// return every problem of a file at once.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "; ")
}

// problemList collects problems for one file.
type problemList struct {
	file string
	list Problems
}

func (l *problemList) add(field, format string, args ...any) {
	l.list = append(l.list, Problem{File: l.file, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (l *problemList) err() error {
	if len(l.list) == 0 {
		return nil
	}
	return l.list
}
