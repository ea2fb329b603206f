// ViewRoutes (see view_routes.h).
#include "cli/view/view_routes.h"

#include "zrec/remote.h"

#include "cli/formats/printable.h"
#include "cli/report/json.h"
#include "cli/view/assets.h"
#include "cli/view/overview.h"
#include "cli/view/query_params.h"
#include "cli/view/record_detail.h"
#include "cli/view/record_pages.h"

namespace zrec::cli::view {

namespace {

void text_response(HttpResponse& out, int status, const std::string& text) {
  out.status = status;
  out.content_type = "text/plain; charset=utf-8";
  out.body = text + "\n";
  out.tail = {};  // an answer replaces any download set before it
  out.keep.reset();
}

int http_status(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kUnsupported:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kBusy:
      return 409;
    default:
      return 500;
  }
}

// A store of the catalog named by the "path" and "stream" parameters.
struct StoreRef {
  size_t path = 0, stream = 0;
};

Result<size_t> path_index(const HttpRequest& request, const Catalog& catalog) {
  ZREC_ASSIGN_OR_RETURN(uint64_t p, uint_param(request, "path", std::nullopt, 0, UINT32_MAX));
  if (p >= catalog.paths().size())
    return not_found("no PATH " + std::to_string(p) + ": zrec view serves " + std::to_string(catalog.paths().size()));
  return static_cast<size_t>(p);
}

Result<StoreRef> store_ref(const HttpRequest& request, const Catalog& catalog) {
  StoreRef ref;
  ZREC_ASSIGN_OR_RETURN(ref.path, path_index(request, catalog));
  ZREC_ASSIGN_OR_RETURN(uint64_t s, uint_param(request, "stream", 0, 0, UINT32_MAX));
  const size_t streams = catalog.paths()[ref.path].streams.size();
  if (s >= streams)
    return not_found("no stream " + std::to_string(s) + " in PATH " + std::to_string(ref.path) + ", which has " +
                     std::to_string(streams));
  ref.stream = static_cast<size_t>(s);
  return ref;
}

void json_response(HttpResponse& out, const JsonWriter& j) {
  out.status = 200;
  out.content_type = "application/json";
  out.body = j.str();
  out.tail = {};
  out.keep.reset();
}

}  // namespace

void ViewRoutes::handle(const HttpRequest& request, HttpResponse& response) noexcept {
  try {
    const std::string* host = request.header("Host");
    if (!guard_.host_allowed(host)) {
      text_response(response, 403,
                    "zrec view: the Host header '" + printable(host ? *host : "") +
                        "' does not name this server; open the URL zrec view printed");
      return;
    }
    const std::optional<std::string_view> route = guard_.strip_token(request.path);
    if (!route) {
      text_response(response, 403, "zrec view: missing or wrong token; open the URL zrec view printed");
      return;
    }
    if (!request.path.ends_with('/') && *route == "/") {  // /TOKEN: the page's relative links need /TOKEN/
      text_response(response, 301, "zrec view: the page is at /" + guard_.token() + "/");
      response.headers.emplace_back("Location", "/" + guard_.token() + "/");
      return;
    }
    if (route->starts_with("/api/")) {
      const std::string_view name = route->substr(5);
      // POST starts a verify; everything else is read with GET (or HEAD).
      const bool wants_post = name == "verify" && request.param("job") == nullptr;
      const bool read = request.method == "GET" || request.method == "HEAD";
      Status s = (wants_post ? request.method == "POST" : read) ? api(name, request, response) : Status::ok();
      if (wants_post ? request.method != "POST" : !read) {
        s = invalid_argument(wants_post ? "start a verify with POST (poll it with GET ?job=N)" : "the API takes GET");
        response.headers.emplace_back("Allow", wants_post ? "POST" : "GET, HEAD");
      }
      if (!s.is_ok()) {
        JsonWriter j;
        j.begin_object().key("error").value(redact_urls_in(s.message())).end_object();
        json_response(response, j);
        response.status = response.headers.empty() ? http_status(s) : 405;
      }
      return;
    }
    if (request.method != "GET" && request.method != "HEAD") {
      text_response(response, 405, "zrec view: the page takes GET only");
      response.headers.emplace_back("Allow", "GET, HEAD");
      return;
    }
    const Asset* asset = find_asset(*route == "/" ? "index.html" : route->substr(1));
    if (asset == nullptr) {
      text_response(response, 404, "zrec view: no such page");
      return;
    }
    response.status = 200;
    response.content_type = std::string(asset_content_type(asset->name));
    response.body = std::string(asset->bytes);
  } catch (const std::exception& e) {  // std::bad_alloc and the like: answer, do not kill the server
    text_response(response, 500, std::string("zrec view: internal error: ") + e.what());
  }
}

Status ViewRoutes::api(std::string_view route, const HttpRequest& request, HttpResponse& response) {
  const bool post = request.method == "POST";
  JsonWriter j;
  if (route == "paths") {
    j.begin_object().key("paths").begin_array();
    for (size_t i = 0; i < catalog_.paths().size(); ++i) {
      const ViewPath& p = catalog_.paths()[i];
      j.begin_object().key("index").value(uint64_t{i}).key("path").value(redact_url(p.path)).key("root").value(p.root);
      j.key("keys").value(p.has_keys()).key("streams").begin_array();
      for (const ViewStream& s : p.streams) j.value(s.name);
      j.end_array().end_object();
    }
    j.end_array().key("version").value(ZREC_VERSION).end_object();
  } else if (route == "overview") {
    ZREC_ASSIGN_OR_RETURN(size_t path, path_index(request, catalog_));
    ZREC_ASSIGN_OR_RETURN(uint64_t dims, uint_param(request, "dims", 0, 0, 1));
    catalog_.refresh(path);  // a reload shows what was published since
    const ViewPath& p = catalog_.paths()[path];
    j.begin_object().key("path").value(uint64_t{path}).key("root").value(p.root).key("streams").begin_array();
    uint64_t first_length = 0;
    bool agree = true;
    for (size_t s = 0; s < p.streams.size(); ++s) {
      ZREC_ASSIGN_OR_RETURN(StoreLease store, catalog_.lease(path, s));
      if (s == 0) first_length = store->length();
      agree = agree && store->length() == first_length;
      const auto names = labels_.find(p.streams[s].name);
      ZREC_RETURN_IF_ERROR(write_store_overview(j, p.streams[s].name, *store, dims == 1,
                                                names == labels_.end() ? nullptr : &names->second));
    }
    j.end_array().key("lengths_agree").value(agree).end_object();
  } else if (route == "records") {
    PageQuery q;
    ZREC_ASSIGN_OR_RETURN(q.path, path_index(request, catalog_));
    if (const std::string* sel = request.param("sel")) q.selection = *sel;
    ZREC_ASSIGN_OR_RETURN(q.sample, optional_uint_param(request, "sample", 0, INT64_MAX));
    ZREC_ASSIGN_OR_RETURN(q.seed, uint_param(request, "seed", 0, 0, UINT64_MAX));
    ZREC_ASSIGN_OR_RETURN(q.offset, uint_param(request, "offset", 0, 0, INT64_MAX));
    ZREC_ASSIGN_OR_RETURN(q.limit, uint_param(request, "limit", 48, 1, kMaxPageRows));
    ZREC_ASSIGN_OR_RETURN(q.filter,
                          parse_filter(catalog_, q.path, request.param("label"), request.param("q"), labels_));
    ZREC_ASSIGN_OR_RETURN(q.cursor, uint_param(request, "cursor", 0, 0, INT64_MAX));
    ZREC_ASSIGN_OR_RETURN(q.scan, uint_param(request, "scan", kDefaultFilterScan, 1, kMaxFilterScan));
    ZREC_RETURN_IF_ERROR(write_page(j, catalog_, budget_, q, vocabs_, labels_));
  } else if (route == "record" || route == "picture" || route == "hex" || route == "npy") {
    ZREC_ASSIGN_OR_RETURN(StoreRef ref, store_ref(request, catalog_));
    ZREC_ASSIGN_OR_RETURN(StoreLease store, catalog_.lease(ref.path, ref.stream));
    ZREC_ASSIGN_OR_RETURN(uint64_t id, id_param(request, "id", store->length()));
    if (route == "record") {
      ZREC_RETURN_IF_ERROR(write_record(j, *store, id, budget_,
                                        find_vocabulary(vocabs_, catalog_.paths()[ref.path].streams[ref.stream].name)));
    } else if (route == "hex") {
      ZREC_ASSIGN_OR_RETURN(uint64_t offset, uint_param(request, "offset", 0, 0, UINT32_MAX));
      ZREC_ASSIGN_OR_RETURN(uint64_t length, uint_param(request, "length", 4096, 1, kMaxHexBytes));
      ZREC_RETURN_IF_ERROR(write_hex(j, *store, id, offset, length));
    } else if (route == "picture") {
      const std::string* size = request.param("size");
      if (size != nullptr && *size != "thumb" && *size != "full")
        return invalid_argument("parameter 'size': '" + printable(*size) + "' is not thumb or full");
      const bool thumb = size == nullptr || *size == "thumb";
      return picture_response(*store, id, thumb ? kThumbnailSide : kMaxPictureSide, budget_, response);
    } else {
      return npy_response(*store, id, "record-" + std::to_string(id) + ".npy", budget_, response);
    }
  } else if (route == "verify" && post) {
    ZREC_ASSIGN_OR_RETURN(StoreRef ref, store_ref(request, catalog_));
    ZREC_ASSIGN_OR_RETURN(uint64_t job,
                          jobs_.start(catalog_.paths()[ref.path].streams[ref.stream].dir, ref.path, ref.stream));
    j.begin_object().key("job").value(job).end_object();
  } else if (route == "verify") {
    ZREC_ASSIGN_OR_RETURN(uint64_t job, uint_param(request, "job", std::nullopt, 1, UINT64_MAX));
    ZREC_RETURN_IF_ERROR(jobs_.write_status(j, job));
  } else {
    return not_found("no API route '" + printable(route) + "'");
  }
  json_response(response, j);
  return Status::ok();
}

}  // namespace zrec::cli::view
