// s3_config (see s3_config.h): the AWS settings chain, in the order the AWS CLI reads it.
#include "io/s3_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "io/remote_file.h"

namespace zrec::io {

namespace {

using Section = std::map<std::string, std::string>;
using Ini = std::map<std::string, Section>;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string trim(std::string s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// The file at `path`, if it is there: a regular file of at most 1 MiB, opened without
// blocking (a FIFO named like a credentials file must not hang a read of a bucket).
Result<std::string> read_settings_file(const std::string& path, bool& found) {
  found = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::string();
    return io_error("cannot open the AWS settings file '" + path + "': " + std::strerror(errno));
  }
  struct stat st;
  std::string text;
  Status status = Status::ok();
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20)) {
    status = invalid_argument("the AWS settings file '" + path + "' is not a regular file of at most 1 MiB");
  } else {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
    found = true;
  }
  ::close(fd);
  if (!status.is_ok()) return status;
  return text;
}

// "[section]" lines and "key = value" lines below them; '#' and ';' start comments.
Ini parse_ini(const std::string& text) {
  Ini out;
  std::string section;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = trim(text.substr(at, end - at));
    at = end + 1;
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = trim(line.substr(1, line.size() - 2));
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos || section.empty()) continue;
    out[section][trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return out;
}

std::string home_file(const char* variable, const char* under_home) {
  if (std::string v = env(variable); !v.empty()) return v;
  const std::string home = env("HOME");
  return home.empty() ? std::string() : home + "/" + under_home;
}

bool truthy(const std::string& v) { return v == "true" || v == "TRUE" || v == "True" || v == "1"; }

const std::string* lookup(const Section* s, const char* key) {
  if (s == nullptr) return nullptr;
  const auto it = s->find(key);
  return it == s->end() || it->second.empty() ? nullptr : &it->second;
}

}  // namespace

Result<S3Config> resolve_s3_config(const S3Options& options) {
  S3Config c;
  std::string profile = env("AWS_PROFILE");
  const bool named_profile = !profile.empty();
  if (profile.empty()) profile = env("AWS_DEFAULT_PROFILE");
  if (profile.empty()) profile = "default";
  const std::string credentials_path = home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  const std::string config_path = home_file("AWS_CONFIG_FILE", ".aws/config");
  bool have_credentials_file = false, have_config_file = false;
  ZREC_ASSIGN_OR_RETURN(const std::string credentials_text,
                        read_settings_file(credentials_path, have_credentials_file));
  ZREC_ASSIGN_OR_RETURN(const std::string config_text, read_settings_file(config_path, have_config_file));
  const Ini credentials = parse_ini(credentials_text), config = parse_ini(config_text);
  const auto section = [](const Ini& ini, const std::string& name) -> const Section* {
    const auto it = ini.find(name);
    return it == ini.end() ? nullptr : &it->second;
  };
  const Section* cred = section(credentials, profile);
  const Section* conf = section(config, profile == "default" ? "default" : "profile " + profile);

  c.anonymous = options.no_sign || truthy(env("AWS_NO_SIGN_REQUEST"));
  c.region = env("AWS_REGION");
  if (c.region.empty()) c.region = env("AWS_DEFAULT_REGION");
  if (const std::string* r = lookup(conf, "region"); c.region.empty() && r != nullptr) c.region = *r;
  if (c.region.empty()) c.region = "us-east-1";
  c.endpoint = options.endpoint_url;
  for (const char* variable : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"})
    if (c.endpoint.empty()) c.endpoint = env(variable);
  if (const std::string* e = lookup(conf, "endpoint_url"); c.endpoint.empty() && e != nullptr) c.endpoint = *e;
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
  if (!c.endpoint.empty() && !is_http_url(c.endpoint))
    return invalid_argument("the S3 endpoint '" + redact_url(c.endpoint) + "' is not an http:// or https:// URL");
  if (c.anonymous) return c;

  c.access_key = env("AWS_ACCESS_KEY_ID");
  c.secret_key = env("AWS_SECRET_ACCESS_KEY");
  c.session_token = env("AWS_SESSION_TOKEN");
  if (!c.access_key.empty() || !c.secret_key.empty()) {
    if (c.access_key.empty() || c.secret_key.empty())
      return invalid_argument("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
    return c;
  }
  if (named_profile && cred == nullptr && conf == nullptr)
    return invalid_argument("the AWS profile '" + profile + "' (AWS_PROFILE) is in neither '" + credentials_path +
                            "' nor '" + config_path + "'");
  for (const Section* s : {cred, conf}) {
    const std::string* key = lookup(s, "aws_access_key_id");
    const std::string* secret = lookup(s, "aws_secret_access_key");
    if (key == nullptr || secret == nullptr) continue;
    c.access_key = *key;
    c.secret_key = *secret;
    if (const std::string* token = lookup(s, "aws_session_token")) c.session_token = *token;
    return c;
  }
  return invalid_argument(
      "no AWS credentials to sign requests to a bucket with: set AWS_ACCESS_KEY_ID and "
      "AWS_SECRET_ACCESS_KEY, or the profile '" +
      profile + "' in '" + credentials_path + "' (AWS_PROFILE); a public bucket reads with --no-sign-request");
}

Result<S3Config> s3_config(const S3Options& options) {
  static std::mutex mutex;
  static auto* resolved = new std::map<std::pair<std::string, bool>, Result<S3Config>>;
  std::lock_guard lock(mutex);
  const auto key = std::make_pair(options.endpoint_url, options.no_sign);
  auto it = resolved->find(key);
  if (it == resolved->end()) it = resolved->emplace(key, resolve_s3_config(options)).first;
  return it->second;
}

}  // namespace zrec::io
