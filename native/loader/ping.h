#pragma once
#include <napi.h>

void RegisterPing(Napi::Env env, Napi::Object exports);
