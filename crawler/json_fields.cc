#include "json_fields.h"

#include "absl/strings/ascii.h"
#include "common/time_util.h"

namespace issuescope::crawler::json_fields {

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("field '", field, "' ", problem));
}

const json* Member(const json& obj, const char* name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<int64_t> RequiredInt(const json& obj, const char* name) {
  const json* v = Member(obj, name);
  if (v == nullptr) return FieldError(name, "is missing");
  if (!v->is_number_integer()) return FieldError(name, absl::StrCat("is a ", v->type_name()));
  return v->get<int64_t>();
}

absl::StatusOr<const json*> RequiredMember(const json& obj, const char* name) {
  if (!obj.is_object()) return FieldError(name, "is missing");
  auto it = obj.find(name);
  if (it == obj.end()) return FieldError(name, "is missing");
  if (it->is_null()) return FieldError(name, "is null");
  return &*it;
}

absl::StatusOr<std::string> RequiredString(const json& obj, const char* name) {
  ASSIGN_OR_RETURN(const json* v, RequiredMember(obj, name));
  if (!v->is_string()) return FieldError(name, absl::StrCat("is a ", v->type_name()));
  return v->get<std::string>();
}

absl::StatusOr<int64_t> OptionalInt(const json& obj, const char* name) {
  const json* v = Member(obj, name);
  if (v == nullptr) return 0;
  if (!v->is_number_integer()) return FieldError(name, absl::StrCat("is a ", v->type_name()));
  return v->get<int64_t>();
}

absl::StatusOr<bool> OptionalBool(const json& obj, const char* name) {
  const json* v = Member(obj, name);
  if (v == nullptr) return false;
  if (!v->is_boolean()) return FieldError(name, absl::StrCat("is a ", v->type_name()));
  return v->get<bool>();
}

absl::StatusOr<std::string> OptionalString(const json& obj, const char* name) {
  const json* v = Member(obj, name);
  if (v == nullptr) return std::string();
  if (!v->is_string()) return FieldError(name, absl::StrCat("is a ", v->type_name()));
  return v->get<std::string>();
}

absl::Status SetTime(const json& obj, const char* name, bool required,
                     google::protobuf::Timestamp* out) {
  const json* v = Member(obj, name);
  if (v == nullptr && required) return RequiredMember(obj, name).status();
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_string()) return FieldError(name, absl::StrCat("is a ", v->type_name()));
  auto t = ParseRfc3339(v->get<std::string>());
  if (!t.ok()) return FieldError(name, absl::StrCat("is invalid: ", t.status().message()));
  *out = ToProto(*t);
  return absl::OkStatus();
}

absl::StatusOr<std::string> UserName(const json& obj, const char* name, const char* login_key) {
  const json* user = Member(obj, name);
  if (user == nullptr) return std::string();
  if (!user->is_object()) return FieldError(name, absl::StrCat("is a ", user->type_name()));
  auto login = OptionalString(*user, login_key);
  if (!login.ok()) return FieldError(absl::StrCat(name, ".", login_key), "is not a string");
  return *login;
}

std::string ItemKey(const json& item, const char* key_field) {
  const json* v = Member(item, key_field);
  if (v == nullptr) return "";
  if (v->is_number_integer()) return absl::StrCat(key_field, " ", v->get<int64_t>());
  if (v->is_string()) return absl::StrCat(key_field, " ", v->get<std::string>().substr(0, 40));
  return "";
}

absl::StatusOr<json> ParseJson(absl::string_view body) {
  try {
    return json::parse(body.begin(), body.end());
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", e.what()));
  }
}

absl::StatusOr<std::string> ReadIssueBasics(const json& obj, v1::Issue* issue) {
  RETURN_IF_ERROR(SetTime(obj, "updated_at", true, issue->mutable_updated_at()));
  RETURN_IF_ERROR(SetTime(obj, "created_at", true, issue->mutable_created_at()));
  ASSIGN_OR_RETURN(*issue->mutable_title(), RequiredString(obj, "title"));
  ASSIGN_OR_RETURN(*issue->mutable_body(), OptionalString(obj, "body"));
  ASSIGN_OR_RETURN(std::string state, RequiredString(obj, "state"));
  return absl::AsciiStrToLower(state);
}

}  // namespace issuescope::crawler::json_fields
