#define APPOBJ 0
#define REQS 2
#define REQSSEC 4
#define ERRS 6
#define ERRSSEC 8
#define QUEUE 10
