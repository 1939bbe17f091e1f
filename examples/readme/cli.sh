name="nsdoc-$$-cli"
netns add "$name"                        # as `ip netns add`
trap 'netns del "$name"' EXIT            # as `ip netns del`
netns set "$name" auto && netns list     # as ip: NAME (id: N)
netns exec "$name" ip -brief link        # as `ip netns exec` (/etc/netns/NAME, /sys remounted)
netns exec --no-etc "$name" sh -c 'exit 3' || echo "exit status: $?"   # the command's own: 3
netns -j list-id                         # [{"nsid":N,"name":"…"}], as ip -j netns list-id
netns pids "$name" --json                # []
netns addrset list "$name" --table netpol --json       # the sets in the table (see Address sets)
netns addrset gc "$name" --table netpol --all --dry-run --json
netns addrset gc "$name" --table netpol || echo "exit status: $?"   # 2: no live list given
