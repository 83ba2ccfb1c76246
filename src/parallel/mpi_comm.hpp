#pragma once
// The MPI Comm (comm.hpp) and how a command finds out whether it was started
// by an MPI launcher. Only standard MPI-3 calls (Open MPI and MPICH both
// build it); compiled in when CMake's LOSSLESS_MPI is on, otherwise
// MpiBuilt() is false and OpenMpiWorld() never returns a Comm.
#include <memory>
#include <string>

#include "parallel/comm.hpp"

namespace lossless::parallel {

// Whether this binary was built with MPI (CMake option LOSSLESS_MPI).
bool MpiBuilt();

// Whether the environment says an MPI launcher started this process with
// more than zero peers: OMPI_COMM_WORLD_SIZE (Open MPI's mpirun),
// PMI_SIZE (MPICH's Hydra), PMIX_RANK (PMIx launchers such as Slurm's srun).
// A plain start (no launcher) never initializes MPI, so the serial path
// costs nothing in an MPI build.
bool LaunchedByMpi();

// This process's rank as the launcher's environment gives it
// (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), or -1 when none does; usable
// without MPI (a build without MPI started by mpirun reports on rank 0 only).
int LauncherRank();

// The number of processes the launcher started (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE), or -1 when the environment does not say.
int LauncherSize();

// The library's version string, first line up to its first comma ("Open MPI
// v4.1.4"), or "" without MPI. Callable before MPI is initialized.
std::string MpiLibraryVersion();

// MPI_COMM_WORLD as a Comm when MpiBuilt() && LaunchedByMpi(), else nullptr.
// Initializes MPI on first call; MPI is finalized when the returned object
// is destroyed (one world per process: a second call after that throws).
std::unique_ptr<Comm> OpenMpiWorld();

}  // namespace lossless::parallel
