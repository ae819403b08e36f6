#include <curl/curl.h>
/* The multi loop waits on libcurl's sockets with epoll and is woken through an eventfd; Glibc's
   Swift module does not export these two headers. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
/* curl_easy_setopt and curl_easy_getinfo are variadic: Swift calls these typed shims instead. */
static inline CURLcode parley_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode parley_curl_setopt_write_callback(CURL *h, size_t (*cb)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb); }
static inline CURLcode parley_curl_setopt_header_callback(CURL *h, size_t (*cb)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb); }
static inline CURLcode parley_curl_setopt_xferinfo_callback(CURL *h, int (*cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb); }
static inline CURLcode parley_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode parley_curl_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
/* curl_multi_setopt is variadic too: the event-driven (socket_action) loop sets these. */
static inline CURLMcode parley_curl_multi_setopt_socket_callback(CURLM *m, int (*cb)(CURL *, curl_socket_t, int, void *, void *)) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, cb); }
static inline CURLMcode parley_curl_multi_setopt_timer_callback(CURLM *m, int (*cb)(CURLM *, long, void *)) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, cb); }
static inline CURLMcode parley_curl_multi_setopt_pointer(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
