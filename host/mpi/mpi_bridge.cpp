// libeulernpu_mpi.so (mpi_bridge.h): bytes from every rank to rank 0 over
// MPI_COMM_WORLD, in chunks an int count can hold.
#include "mpi_bridge.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

#define ENP_MPI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSizeTag = 1;
constexpr int kDataTag = 2;
constexpr uint64_t kChunk = 1ull << 30;

int failed(int code, const char* call, char* err, size_t err_size) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  std::snprintf(err, err_size, "%s: %s", call, text);
  return 1;
}

}  // namespace

ENP_MPI_EXPORT int enp_mpi_init(int* rank, int* size, char* err, size_t err_size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    if (const int c = MPI_Init(nullptr, nullptr); c != MPI_SUCCESS)
      return failed(c, "MPI_Init", err, err_size);
  }
  // Errors come back as codes, reported as eulernpu errors, not aborts.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (const int c = MPI_Comm_rank(MPI_COMM_WORLD, rank); c != MPI_SUCCESS)
    return failed(c, "MPI_Comm_rank", err, err_size);
  if (const int c = MPI_Comm_size(MPI_COMM_WORLD, size); c != MPI_SUCCESS)
    return failed(c, "MPI_Comm_size", err, err_size);
  return 0;
}

ENP_MPI_EXPORT int enp_mpi_send_to_root(const void* data, uint64_t size, char* err,
                                        size_t err_size) {
  if (const int c = MPI_Send(&size, 1, MPI_UINT64_T, 0, kSizeTag, MPI_COMM_WORLD); c != MPI_SUCCESS)
    return failed(c, "MPI_Send", err, err_size);
  const char* p = static_cast<const char*>(data);
  for (uint64_t at = 0; at < size; at += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, size - at));
    if (const int c = MPI_Send(p + at, n, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD); c != MPI_SUCCESS)
      return failed(c, "MPI_Send", err, err_size);
  }
  return 0;
}

ENP_MPI_EXPORT int enp_mpi_recv_size(int from, uint64_t* size, char* err, size_t err_size) {
  if (const int c =
          MPI_Recv(size, 1, MPI_UINT64_T, from, kSizeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      c != MPI_SUCCESS) {
    return failed(c, "MPI_Recv", err, err_size);
  }
  return 0;
}

ENP_MPI_EXPORT int enp_mpi_recv(int from, void* data, uint64_t size, char* err, size_t err_size) {
  char* p = static_cast<char*>(data);
  for (uint64_t at = 0; at < size; at += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, size - at));
    if (const int c =
            MPI_Recv(p + at, n, MPI_BYTE, from, kDataTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        c != MPI_SUCCESS) {
      return failed(c, "MPI_Recv", err, err_size);
    }
  }
  return 0;
}

ENP_MPI_EXPORT void enp_mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

ENP_MPI_EXPORT int enp_mpi_finalize(char* err, size_t err_size) {
  if (const int c = MPI_Finalize(); c != MPI_SUCCESS)
    return failed(c, "MPI_Finalize", err, err_size);
  return 0;
}
