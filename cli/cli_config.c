/* cli_config.c - the list of options given, at most one per key. */
#include "cli_config.h"

#include <stdio.h>

const option_setting *cli_config_find(const cli_config *config, brs_option key)
{
    for (size_t i = 0; i < config->setting_count; i++)
        if (config->settings[i].key == key)
            return &config->settings[i];
    return NULL;
}

option_setting *cli_config_add(cli_config *config, brs_option key, const char *source)
{
    if (cli_config_find(config, key) != NULL || config->setting_count == OPTION_TABLE_MAX)
        return NULL;
    option_setting *setting = &config->settings[config->setting_count++];
    *setting = (option_setting){key, 0, 0.0, ""};
    snprintf(setting->source, sizeof setting->source, "%s", source);
    return setting;
}
