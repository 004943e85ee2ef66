package store

import "errors"

// ErrNotFound is returned when a run or session is not in the index.
var ErrNotFound = errors.New("not found")

// ErrDuplicateRun is returned when a run id is already indexed from another
// bundle path.
var ErrDuplicateRun = errors.New("run id already indexed from another bundle")

// ErrDuplicateSession is returned when a session id is already indexed from
// another file.
var ErrDuplicateSession = errors.New("session id already indexed from another file")
