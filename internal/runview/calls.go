package runview

import (
	"context"
	"errors"
	"fmt"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// Calls reads the calls an indexed run recorded (exchanges.jsonl); their
// requests are read one at a time (Request). What of exchanges.jsonl
// cannot be read is said.
func (s *Service) Calls(ctx context.Context, id string) ([]bundle.Exchange, bundle.Problems, error) {
	log, probs, err := s.exchanges(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return log.Exchanges, probs, nil
}

// Request is the request of the call numbered seq, rebuilt alone, byte
// for byte as the agent sent it (redacted).
func (s *Service) Request(ctx context.Context, id string, seq int64) ([]byte, error) {
	log, _, err := s.exchanges(ctx, id)
	if err != nil {
		return nil, err
	}
	for i, x := range log.Exchanges {
		if x.Seq == seq {
			return log.Request(i)
		}
	}
	return nil, fmt.Errorf("run %s recorded no call %d: %w", id, seq, ErrNoCall)
}

// ErrNoCall is a call a run did not record.
var ErrNoCall = errors.New("no such call")

func (s *Service) exchanges(ctx context.Context, id string) (*bundle.ExchangeLog, bundle.Problems, error) {
	dir, _, err := s.runDir(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return bundle.ReadExchanges(dir, s.Limits)
}
