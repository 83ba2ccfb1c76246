# Sourced by the CLI tests that run under mpirun (after lib/require.sh):
# fails or skips without mpirun (see `require`), lets Open MPI run as root
# and in containers (docs/parallel.md), and gives MPIRUN, the launcher with
# those flags, and a scratch folder $tmp removed on exit.
require mpirun
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
MPIRUN=(mpirun --oversubscribe --allow-run-as-root)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
