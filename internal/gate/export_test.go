package gate

import (
	"context"
	"time"
)

// Stage journals a review as Review does and stops before the source is
// touched: the state a process killed right after the journal was written
// leaves behind.
func Stage(ctx context.Context, runDir string, reviewer Reviewer, opt Options) error {
	unlock, err := lock(ctx, runDir, time.Second)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = stage(ctx, runDir, reviewer, opt)
	return err
}
