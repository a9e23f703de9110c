// Counter offsets of the WaveGen test provider (own test data, written like an SDK sample).
#define WAVE_OBJ 0
#define RAMP 2
#define PULSE 4
#define NOISE 6
#define FIXED 8
