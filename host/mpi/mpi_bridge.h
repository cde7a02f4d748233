/* The C interface of libeulernpu_mpi.so, the one part of eulernpu linked
 * with MPI. The host loads it only for --mpi, so that no other command
 * pays for MPI's libraries, and a machine without MPI still runs the rest.
 * Every function returns 0 on success, else writes a message into `err`
 * (`err_size` bytes, NUL-terminated) and returns non-zero. */
#ifndef EULERNPU_MPI_BRIDGE_H_
#define EULERNPU_MPI_BRIDGE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MPI_Init; this process's rank in MPI_COMM_WORLD and the world's size. */
int enp_mpi_init(int* rank, int* size, char* err, size_t err_size);
/* From a rank other than 0: `size` bytes to rank 0. */
int enp_mpi_send_to_root(const void* data, uint64_t size, char* err, size_t err_size);
/* On rank 0: the size of what rank `from` sends next, then its bytes. */
int enp_mpi_recv_size(int from, uint64_t* size, char* err, size_t err_size);
int enp_mpi_recv(int from, void* data, uint64_t size, char* err, size_t err_size);
/* Ends every rank's process (MPI_Abort): a rank that failed must not leave
 * the others waiting for it. */
void enp_mpi_abort(int code);
int enp_mpi_finalize(char* err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* EULERNPU_MPI_BRIDGE_H_ */
