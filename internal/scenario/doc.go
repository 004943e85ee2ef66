// Package scenario owns the scenario folder format: scenario.yaml (its
// parser reports every problem as file:line:col: field: problem, names the
// nearest valid field for an unknown one, and refuses literal secrets), the
// fixture, the optional model script, setup and ready executables and the
// checks/ executables; loading a folder of scenarios into a suite; and
// scaffolding a new one.
package scenario
