#include <brs.h>
