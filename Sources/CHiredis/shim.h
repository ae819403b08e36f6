#include <hiredis/hiredis.h>
