// transfer.h: offsets of the Transfer and Peer objects' names and help texts. LodCtr adds them to
// the host's First Counter / First Help; they are even and start at 0.
#define TRANSFER_OBJECT 0
#define BYTES_SENT 2
#define AVAILABLE_BANDWIDTH 4
#define PEER_OBJECT 6
#define BYTES_SERVED 8
