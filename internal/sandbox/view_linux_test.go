package sandbox

import (
	"slices"
	"testing"
)

// The view never takes from the host what is the view's own — its root,
// /proc, /sys, /dev and /run and what is below them — nor a path that is
// not absolute, whichever list of the policy names it; the rest it binds
// in order: folders by depth, a folder to read before the same to write,
// files last.
func TestTheViewBindsNothingOfTheHostsOwn(t *testing.T) {
	own := []string{"/", "/run", "/run/", "/run/user/0", "/run/docker.sock", "/proc", "/proc/1/root", "/sys", "/sys/fs/cgroup", "/dev", "/dev/sda", "relative", "../up"}
	p := Policy{
		Read:  append([]string{"/opt/tool", "/runner"}, own...),
		Write: append([]string{"/work/ws", "/opt/tool"}, own...),
		Run:   append([]string{"/usr/bin/go"}, own...),
	}
	var got []string
	for _, b := range p.binds() {
		if !slices.Contains(System, b.path) {
			got = append(got, b.path)
		}
		for _, o := range own {
			if b.path == o {
				t.Errorf("the view binds the host's %s", o)
			}
		}
	}
	want := []string{"/runner", "/opt/tool", "/work/ws", "/opt/tool", "/usr/bin/go"}
	if !slices.Equal(got, want) {
		t.Errorf("binds %q, want %q", got, want)
	}
}
