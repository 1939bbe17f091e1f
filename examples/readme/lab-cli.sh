cd "$(dirname "$0")"
export NETNS_LAB_DIR="${TMPDIR:-/tmp}/netns-lab-doc-$$" # state files; default /run/netns-lab
netns lab up lab.yaml                        # prints each node's namespace (nsdoc-demo.a, …)
netns lab exec a -- ping -c 1 10.80.1.3      # the only lab up needs no --lab
netns lab impair c s2 --rate 1mbit           # what c sends to s2; --clear takes it off
netns lab partition a c                      # prints the partition's id
netns lab matrix | tail -1                   # dropped: 2 of 20 (10%)
netns lab heal 1
netns lab link r1 r2 down && netns lab link r1 r2 up
netns lab status                             # nodes, links, impairments, partitions
netns lab graph --format dot > "$NETNS_LAB_DIR/lab.dot" # or mermaid
netns lab down demo                          # the name is required: nothing is deleted by default
rm -rf "$NETNS_LAB_DIR"
