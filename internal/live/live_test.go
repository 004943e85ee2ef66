package live_test

import (
	"sync"
	"testing"

	"github.com/proctor-dev/proctor/internal/live"
)

func TestASubscriberIsWokenByItsRunsNewsOnly(t *testing.T) {
	b := live.New()
	a, stopA := b.Subscribe("run-a")
	other, stopOther := b.Subscribe("run-b")
	defer stopOther()
	for range 3 {
		b.Publish("run-a") // never blocks, however much news nobody has read
	}
	select {
	case <-a:
	default:
		t.Fatal("run-a's subscriber was not woken")
	}
	select {
	case <-a:
		t.Fatal("woken once per look, not once per piece of news")
	default:
	}
	select {
	case <-other:
		t.Fatal("run-b's subscriber was woken by run-a's news")
	default:
	}
	stopA()
	b.Publish("run-a")
	select {
	case <-a:
		t.Fatal("woken after it unsubscribed")
	default:
	}
	var nilBroker *live.Broker
	nilBroker.Publish("run-a")
	if ch, stop := nilBroker.Subscribe("run-a"); ch != nil {
		t.Fatal("a nil broker gave a channel")
	} else {
		stop()
	}
}

func TestPublishAndSubscribeAtOnce(t *testing.T) {
	b := live.New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				ch, stop := b.Subscribe("r")
				b.Publish("r")
				<-ch
				stop()
			}
		})
	}
	wg.Wait()
}
