name="nsdoc-$$-cli"
netns add "$name"                        # as `ip netns add`
trap 'netns del "$name"' EXIT            # as `ip netns del`
netns list                               # ours and ip's alike; not-mounted leftovers are marked
netns exec "$name" -- ip -brief link     # as `ip netns exec` (/etc/netns/NAME, /sys remounted)
netns exec --no-etc "$name" -- sh -c 'exit 3' || echo "exit status: $?"   # the command's own: 3
netns pids "$name" --json                # []
netns identify --json                    # the names of this process's namespace, if any
netns addrset list "$name" --table netpol --json       # the sets in the table (see Address sets)
netns addrset gc "$name" --table netpol --all --dry-run --json
netns addrset gc "$name" --table netpol || echo "exit status: $?"   # 2: no live list given
