# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: `llmnet plan --destroy` (issue 27,
# point 5), what teardown would remove, shown and not done. After apply:
# plan --destroy lists the targets', initiators' and hostfiles' objects,
# exits 2 with --detailed-exitcode, changes no node, and counts exactly
# what the teardown after it removes; with --purge it adds the backing
# files and the agent, and counts what teardown --purge removes; --purge
# without --destroy is refused before any node is contacted; after the
# teardown it has nothing to show (exit 0).

plan_removes() { sed -n 's/^Plan: 0 to create, 0 to change, \([0-9]*\) to remove.*/\1/p' "$C/out"; }
teardown_changed() { sed -n 's/^teardown: \([0-9]*\) changed on .*/\1/p' "$C/out"; }

scenario_plan_destroy() {
	local planned
	new_cluster destroy || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	touch "$C/marker"
	sleep 1.1
	llmnet plan "$C/spec.yaml" --destroy --detailed-exitcode
	check_cmd "plan --destroy exits 2 (something to remove)" rc_is 2
	check_cmd "plan --destroy shows the target's subsystem removed" out_has "- nvmet_subsystem"
	check_cmd "plan --destroy shows an initiator's connection removed" out_has "- nvme_connection"
	check_cmd "plan --destroy shows the hostfiles removed" out_has "- hostfile"
	check_cmd "plan --destroy without --purge keeps the agent" not_out_has "- agent"
	check_cmd "plan --destroy without --purge keeps the backing file" not_out_has "- backing_file"
	planned=$(plan_removes)
	for i in 1 2 3; do
		check_cmd "n$i: plan --destroy changed nothing" unchanged_since "$i" "$C/marker"
	done
	llmnet plan "$C/spec.yaml" --destroy --purge
	check_cmd "plan --destroy --purge exits 0" rc_is 0
	check_cmd "plan --destroy --purge shows the backing file" out_has "- backing_file"
	check_cmd "plan --destroy --purge shows the agent" out_has "- agent"
	check_cmd "n1: plan --destroy --purge changed nothing" unchanged_since 1 "$C/marker"
	check_cmd "n1 keeps its backing file" test -f "$(root 1)/var/lib/nvmet/disk1.img"
	llmnet plan "$C/spec.yaml" --purge
	check_cmd "plan --purge without --destroy is a usage error" rc_is 64
	check_cmd "... that says so" out_has "--purge is for plan --destroy"
	llmnet teardown "$C/spec.yaml"
	check_cmd "teardown exits 0" rc_is 0
	check_cmd "plan --destroy counted what teardown removed ($planned)" test "$planned" = "$(teardown_changed)"
	check_cmd "foreign objects untouched" foreign_intact
	llmnet plan "$C/spec.yaml" --destroy --purge --detailed-exitcode
	check_cmd "after teardown, plan --destroy --purge still has the kept backing file" \
		out_has "- backing_file"
	planned=$(plan_removes)
	llmnet teardown "$C/spec.yaml" --purge
	check_cmd "teardown --purge exits 0" rc_is 0
	check_cmd "plan --destroy --purge counted what teardown --purge removed ($planned)" \
		test "$planned" = "$(teardown_changed)"
	llmnet plan "$C/spec.yaml" --destroy --detailed-exitcode
	check_cmd "after teardown, plan --destroy exits 0" rc_is 0
	check_cmd "after teardown, plan --destroy has nothing to remove" \
		out_has "Plan: 0 to create, 0 to change, 0 to remove"
}
