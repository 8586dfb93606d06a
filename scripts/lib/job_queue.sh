# A job queue that several workers of one script share: a text file, one job per line.
# Sourced by scripts/reproduction.sh and scripts/fair_methods.sh.
#
# The lock is a file of its own, never the queue: taking the next job rewrites the queue (sed -i renames a new file
# over it), so a lock held on the queue itself would be held on a file that is no longer there, and a worker that
# opened the new one would run beside it — two workers then take the same job and another job is lost.

queue_pop() {  # queue: prints the first job and removes it (nothing when the queue is empty)
    flock "$1.lock" bash -c 'head -1 "$0"; sed -i 1d "$0"' "$1"
}

queue_push() {  # queue job: appends the job at the queue's end
    flock "$1.lock" bash -c 'echo "$1" >> "$0"' "$1" "$2"
}
