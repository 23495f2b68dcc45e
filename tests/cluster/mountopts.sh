# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: an initiator mount's options (issue 31,
# point 3). n2 mounts its namespace at /mnt/ckpt: plan shows the options,
# apply mounts nosuid,nodev,noexec. Then n2's mountinfo says the mount
# allows programs (an admin's remount): plan shows "~ mount_options" old ->
# new and changes nothing, apply remounts in place (the mount stays), and
# the control: a second plan has no change. n3 mounts nothing and stays so.

mountinfo() { echo "$(root 2)/proc/self/mountinfo"; }
mounts_has() { grep -qF -- "$2" "$(root "$1")/proc/mounts"; }
mountinfo_has() { grep -qF -- "$1" "$(mountinfo)"; }

scenario_mount_options() {
	local dev
	new_cluster mountopts || { fail "cluster up"; return; }
	sed -i 's|^    - { node: n2, target: \(.*\) }$|    - { node: n2, target: \1, mount: { path: /mnt/ckpt, fs: ext4, format: if-blank } }|' \
		"$C/spec.yaml"
	llmnet plan "$C/spec.yaml"
	check_cmd "plan shows the mount's options" out_has "/mnt/ckpt  (after connect; nosuid,nodev,noexec)"
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	check_cmd "n2 mounted nosuid,nodev,noexec" mounts_has 2 " /mnt/ckpt ext4 rw,nosuid,nodev,noexec,relatime "
	dev=$(grep -o '"device": "[0-9]\+:[0-9]\+"' "$(root 2)/var/lib/llmnet/state.json" | grep -o '[0-9]\+:[0-9]\+')
	check_cmd "n2 recorded the mounted device" test -n "$dev"
	mkdir -p "$(root 2)/proc/self"
	printf '30 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n' > "$(mountinfo)"
	printf '41 30 %s / /mnt/ckpt rw,nosuid,nodev,relatime shared:9 - ext4 /dev/nvme1n1 rw\n' \
		"$dev" >> "$(mountinfo)"
	cp "$(mountinfo)" "$C/mountinfo.before"
	llmnet plan "$C/spec.yaml" --detailed-exitcode
	check_cmd "plan exits 2 (changes pending)" rc_is 2
	check_cmd "plan shows ~ mount_options old -> new" \
		out_has "~ mount_options          /mnt/ckpt  (nosuid,nodev,exec -> nosuid,nodev,noexec)"
	check_cmd "plan changed nothing" cmp -s "$(mountinfo)" "$C/mountinfo.before"
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	check_cmd "apply remounted: mountinfo says noexec" \
		mountinfo_has " /mnt/ckpt rw,nosuid,nodev,noexec,relatime shared:9 - ext4"
	check_cmd "the root mount's options untouched" mountinfo_has "30 1 8:1 / / rw,relatime shared:1"
	check_cmd "never unmounted: the mount is still there" mounts_has 2 " /mnt/ckpt ext4 "
	check_cmd "apply removed nothing" not_out_has "- mount"
	llmnet plan "$C/spec.yaml" --detailed-exitcode
	check_cmd "control: a second plan exits 0" rc_is 0
	check_cmd "control: a second plan has no change" out_has "Plan: 0 to create, 0 to change, 0 to remove"
	check_cmd "n3 mounts nothing" not mounts_has 3 "/mnt/ckpt"
}
