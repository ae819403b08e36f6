#include <cmark-gfm.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm-core-extensions.h>
/* Exported by libcmark-gfm-extensions but declared in no installed header; reads 0 until
   cmark_gfm_core_extensions_ensure_registered() has run. */
extern cmark_node_type CMARK_NODE_TABLE;
