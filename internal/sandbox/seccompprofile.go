package sandbox

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
)

// dockerDefault is Docker 20.10.24's default seccomp profile
// (dockerseccomp/README.md).
//
//go:embed dockerseccomp/docker-20.10.24-default.json
var dockerDefault []byte

// sandboxSyscalls are the system calls the sandbox's init makes that
// Docker's default profile refuses a container without CAP_SYS_ADMIN:
// clone with namespace flags, the view's mounts and pivot_root, a new
// session keyring, the namespace's host name. Measured with strace over
// the five examples (their commands, checks and caches included) against
// the profile's unconditional allow list. proctor's own filter refuses
// each of them again to every command it starts.
var sandboxSyscalls = []string{"clone", "keyctl", "mount", "mount_setattr", "move_mount", "open_tree", "pivot_root", "sethostname", "umount2"}

// DockerSeccompProfile is the seccomp profile a Docker or Podman container
// needs for proctor's sandbox: Docker's default with one rule more, which
// allows sandboxSyscalls (and so drops the default's rules that allow
// clone only without namespace flags). Nothing else changes.
func DockerSeccompProfile() ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(dockerDefault))
	dec.UseNumber()
	var profile map[string]any
	if err := dec.Decode(&profile); err != nil {
		return nil, fmt.Errorf("Docker's default seccomp profile: %w", err)
	}
	rules, ok := profile["syscalls"].([]any)
	if !ok {
		return nil, fmt.Errorf("Docker's default seccomp profile has no syscalls list")
	}
	kept := rules[:0]
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		names, _ := rule["names"].([]any)
		args, _ := rule["args"].([]any)
		if len(names) == 1 && names[0] == "clone" && len(args) > 0 {
			continue // clone without namespace flags: the rule below allows it whole
		}
		kept = append(kept, r)
	}
	profile["syscalls"] = append(kept, map[string]any{
		"names":   slices.Clone(sandboxSyscalls),
		"action":  "SCMP_ACT_ALLOW",
		"comment": "proctor's sandbox: its namespaces, read-only view, session keyring and host name; proctor's own seccomp filter refuses these to every command it starts",
	})
	out, err := json.MarshalIndent(profile, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
